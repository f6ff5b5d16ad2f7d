dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 64, 80, 80], 'in_0'),
    ([32, 64, 1, 1], 'w_0'),
    ([32], 'w_1'),
]
