dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 1, 32, 512], 'in_0'),
    ([4096, 512], 'w_0'),
    ([1, 16, 32, 64], 'in_1'),
]
