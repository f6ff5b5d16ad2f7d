dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 128, 112, 112], 'in_0'),
    ([128, 128, 1, 1], 'w_0'),
    ([128], 'w_1'),
]
