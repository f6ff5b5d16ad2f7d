dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 65, 64], 'in_0'),
    ([64, 64], 'w_0'),
    ([64], 'w_1'),
]
