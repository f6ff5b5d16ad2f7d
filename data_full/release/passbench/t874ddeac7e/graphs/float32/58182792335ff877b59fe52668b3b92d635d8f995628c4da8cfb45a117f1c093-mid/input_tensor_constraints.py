dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 192, 80, 80], 'in_0'),
    ([15, 192, 1, 1], 'w_0'),
    ([15], 'w_1'),
    ([4, 64, 80, 80], 'in_1'),
    ([4, 79, 1600], 'in_2'),
    ([4, 79, 400], 'in_3'),
]
