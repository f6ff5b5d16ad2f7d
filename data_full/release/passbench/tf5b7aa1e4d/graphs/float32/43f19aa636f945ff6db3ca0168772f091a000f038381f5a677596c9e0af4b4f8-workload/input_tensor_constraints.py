dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 320, 40, 40], 'in_0'),
    ([80, 320, 1, 1], 'w_0'),
    ([80], 'w_1'),
    ([8, 64, 40, 40], 'in_1'),
]
