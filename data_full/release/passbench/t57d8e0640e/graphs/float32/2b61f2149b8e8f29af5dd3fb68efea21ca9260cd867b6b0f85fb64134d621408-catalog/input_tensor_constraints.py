dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 3, 224, 224], 'in_0'),
    ([16, 3, 7, 7], 'w_0'),
    ([16], 'w_1'),
    ([16], 'w_2'),
    ([16], 'w_3'),
    ([16], 'w_4'),
    ([16], 'w_5'),
    ([16], 'w_6'),
    ([16], 'w_7'),
    ([16], 'w_8'),
    ([16], 'w_9'),
]
