dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 57, 14, 14], 'in_0'),
    ([57, 1, 7, 7], 'w_0'),
    ([57], 'w_1'),
    ([4, 38, 14, 14], 'in_1'),
    ([4, 57, 14, 14], 'in_2'),
    ([4, 8, 196, 19], 'in_3'),
]
