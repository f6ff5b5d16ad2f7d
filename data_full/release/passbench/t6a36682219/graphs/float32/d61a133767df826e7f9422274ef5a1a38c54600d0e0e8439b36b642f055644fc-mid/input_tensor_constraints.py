dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 1024, 16, 16], 'in_0'),
    ([1024, 1, 9, 9], 'w_0'),
    ([1024], 'w_1'),
    ([1024], 'w_2'),
    ([1024], 'w_3'),
    ([1024], 'w_4'),
    ([1024], 'w_5'),
]
