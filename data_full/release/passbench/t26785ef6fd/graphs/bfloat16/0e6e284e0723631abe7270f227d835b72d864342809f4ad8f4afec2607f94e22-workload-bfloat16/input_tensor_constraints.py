dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 512, 14, 14], 'in_0'),
    ([32, 512, 1, 1], 'w_0'),
    ([8, 192, 14, 14], 'in_1'),
]
