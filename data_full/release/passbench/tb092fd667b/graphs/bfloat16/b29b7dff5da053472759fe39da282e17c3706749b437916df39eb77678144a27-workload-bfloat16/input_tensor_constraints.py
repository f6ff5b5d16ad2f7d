dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 64, 64, 64], 'in_0'),
    ([24, 64, 1, 1], 'w_0'),
    ([24], 'w_1'),
    ([8, 4, 64, 64], 'in_1'),
    ([8, 4, 64, 64], 'in_2'),
]
