dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 96, 112, 112], 'in_0'),
    ([24, 96, 1, 1], 'w_0'),
    ([24], 'w_1'),
    ([24], 'w_2'),
    ([24], 'w_3'),
    ([24], 'w_4'),
]
