dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 156, 14, 14], 'in_0'),
    ([156, 1, 7, 7], 'w_0'),
    ([8, 156, 14, 14], 'in_1'),
    ([8, 156, 14, 14], 'in_2'),
    ([8, 156, 14, 14], 'in_3'),
    ([624], 'w_1'),
    ([624], 'w_2'),
    ([624], 'w_3'),
    ([624], 'w_4'),
]
