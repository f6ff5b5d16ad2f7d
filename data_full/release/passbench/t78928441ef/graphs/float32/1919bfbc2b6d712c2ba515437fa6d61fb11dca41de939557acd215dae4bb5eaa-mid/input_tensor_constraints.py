dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 3, 256, 256], 'in_0'),
    ([192, 3, 16, 16], 'w_0'),
    ([192], 'w_1'),
    ([4, 1, 192], 'in_1'),
    ([4, 4, 192], 'in_2'),
]
