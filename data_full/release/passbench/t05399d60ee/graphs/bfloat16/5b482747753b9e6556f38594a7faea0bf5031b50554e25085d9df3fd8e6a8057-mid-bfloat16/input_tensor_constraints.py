dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 3, 224, 224], 'in_0'),
    ([768, 3, 7, 7], 'w_0'),
    ([768], 'w_1'),
    ([768], 'w_2'),
    ([768], 'w_3'),
    ([768], 'w_4'),
    ([768], 'w_5'),
]
