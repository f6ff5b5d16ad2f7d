dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 64, 112, 112], 'in_0'),
    ([64, 1, 3, 3], 'w_0'),
    ([8, 64, 56, 56], 'in_1'),
    ([8, 64, 56, 56], 'in_2'),
    ([192], 'w_1'),
    ([192], 'w_2'),
    ([192], 'w_3'),
    ([192], 'w_4'),
]
