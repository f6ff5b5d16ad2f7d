dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 208, 14, 14], 'in_0'),
    ([8, 208, 7, 7], 'in_1'),
    ([8, 208, 7, 7], 'in_2'),
    ([8, 208, 7, 7], 'in_3'),
    ([8, 208, 7, 7], 'in_4'),
    ([8, 208, 7, 7], 'in_5'),
    ([8, 208, 7, 7], 'in_6'),
    ([8, 208, 7, 7], 'in_7'),
]
