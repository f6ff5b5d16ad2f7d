dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 3, 224, 224], 'in_0'),
    ([2048, 3, 14, 14], 'w_0'),
    ([2048], 'w_1'),
]
