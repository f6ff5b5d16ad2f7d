dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 176, 19, 19], 'in_0'),
    ([1408, 176, 1, 1], 'w_0'),
    ([1408], 'w_1'),
    ([1408], 'w_2'),
    ([1408], 'w_3'),
    ([1408], 'w_4'),
]
