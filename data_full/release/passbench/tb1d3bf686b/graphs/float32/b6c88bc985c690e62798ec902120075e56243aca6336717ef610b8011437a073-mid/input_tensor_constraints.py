dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 64, 28, 28], 'in_0'),
    ([64, 64, 3, 3], 'w_0'),
    ([4, 192, 28, 28], 'in_1'),
]
