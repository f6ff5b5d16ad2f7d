dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 52, 14, 14], 'in_0'),
    ([312, 52, 1, 1], 'w_0'),
    ([1, 312, 14, 14], 'in_1'),
    ([624], 'w_1'),
    ([624], 'w_2'),
    ([624], 'w_3'),
    ([624], 'w_4'),
]
