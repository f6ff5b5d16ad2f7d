dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 512, 16, 16], 'in_0'),
    ([512, 512, 3, 3], 'w_0'),
    ([512], 'w_1'),
    ([512], 'w_2'),
    ([512], 'w_3'),
    ([512], 'w_4'),
    ([1, 512, 8, 8], 'in_1'),
]
