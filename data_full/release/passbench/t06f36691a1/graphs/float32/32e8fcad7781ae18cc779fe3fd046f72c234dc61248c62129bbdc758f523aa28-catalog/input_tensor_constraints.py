dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 208, 14, 14], 'in_0'),
    ([1, 208, 7, 7], 'in_1'),
    ([1, 208, 7, 7], 'in_2'),
    ([1, 208, 7, 7], 'in_3'),
    ([1, 208, 7, 7], 'in_4'),
    ([1, 208, 7, 7], 'in_5'),
    ([1, 208, 7, 7], 'in_6'),
    ([1, 208, 7, 7], 'in_7'),
]
