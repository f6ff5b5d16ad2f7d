dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 300, 256], 'in_0'),
    ([2, 256], 'w_0'),
    ([2], 'w_1'),
    ([1, 300, 2], 'in_1'),
    ([1, 300, 2], 'in_2'),
    ([1, 300, 2], 'in_3'),
    ([1, 300, 2], 'in_4'),
    ([1, 300, 2], 'in_5'),
]
