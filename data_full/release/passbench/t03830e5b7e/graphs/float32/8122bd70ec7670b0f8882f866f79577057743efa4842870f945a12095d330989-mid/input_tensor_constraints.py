dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 256, 24, 24], 'in_0'),
    ([1024, 256, 1, 1], 'in_1'),
]
