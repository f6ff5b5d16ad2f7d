dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 38, 28, 28], 'in_0'),
    ([38, 1, 3, 3], 'w_0'),
    ([38], 'w_1'),
    ([4, 57, 28, 28], 'in_1'),
    ([4, 57, 28, 28], 'in_2'),
    ([4, 8, 784, 19], 'in_3'),
]
