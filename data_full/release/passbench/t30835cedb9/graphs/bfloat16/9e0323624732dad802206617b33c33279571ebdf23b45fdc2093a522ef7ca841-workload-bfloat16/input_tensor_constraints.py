dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 96, 56, 56], 'in_0'),
    ([20, 96, 1, 1], 'w_0'),
    ([8, 20, 56, 56], 'in_1'),
    ([40], 'w_1'),
    ([40], 'w_2'),
    ([40], 'w_3'),
    ([40], 'w_4'),
]
