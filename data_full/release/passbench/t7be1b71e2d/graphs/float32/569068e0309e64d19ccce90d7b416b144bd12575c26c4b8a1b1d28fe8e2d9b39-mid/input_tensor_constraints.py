dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 24, 28, 28], 'in_0'),
    ([24, 1, 1, 11], 'w_0'),
    ([24], 'w_1'),
    ([4, 120, 28, 28], 'in_1'),
    ([4, 24, 28, 28], 'in_2'),
    ([4, 24, 28, 28], 'in_3'),
    ([192], 'w_2'),
    ([192], 'w_3'),
    ([192], 'w_4'),
    ([192], 'w_5'),
]
