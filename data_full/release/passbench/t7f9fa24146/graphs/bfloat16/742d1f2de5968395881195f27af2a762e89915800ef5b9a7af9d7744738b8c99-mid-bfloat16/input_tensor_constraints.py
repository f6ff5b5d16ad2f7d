dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 2592, 28, 28], 'in_0'),
    ([192, 2592, 1, 1], 'w_0'),
    ([192], 'w_1'),
    ([4, 192, 1, 1], 'in_1'),
    ([4, 264, 28, 28], 'in_2'),
    ([4, 192, 28, 28], 'in_3'),
    ([4, 192, 28, 28], 'in_4'),
]
