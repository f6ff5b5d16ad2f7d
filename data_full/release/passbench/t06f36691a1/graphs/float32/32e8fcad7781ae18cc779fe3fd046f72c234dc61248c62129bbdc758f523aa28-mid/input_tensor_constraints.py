dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 208, 14, 14], 'in_0'),
    ([4, 208, 7, 7], 'in_1'),
    ([4, 208, 7, 7], 'in_2'),
    ([4, 208, 7, 7], 'in_3'),
    ([4, 208, 7, 7], 'in_4'),
    ([4, 208, 7, 7], 'in_5'),
    ([4, 208, 7, 7], 'in_6'),
    ([4, 208, 7, 7], 'in_7'),
]
