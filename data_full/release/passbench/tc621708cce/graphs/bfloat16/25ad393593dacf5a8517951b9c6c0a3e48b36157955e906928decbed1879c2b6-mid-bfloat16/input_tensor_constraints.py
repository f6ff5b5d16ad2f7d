dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 16, 112, 112], 'in_0'),
    ([96, 16, 1, 1], 'w_0'),
    ([4, 96, 112, 112], 'in_1'),
    ([192], 'w_1'),
    ([192], 'w_2'),
    ([192], 'w_3'),
    ([192], 'w_4'),
]
