dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 64, 80, 80], 'in_0'),
    ([6, 64, 1, 1], 'w_0'),
    ([6], 'w_1'),
    ([8, 36, 80, 80], 'in_1'),
    ([8, 6, 80, 80], 'in_2'),
]
