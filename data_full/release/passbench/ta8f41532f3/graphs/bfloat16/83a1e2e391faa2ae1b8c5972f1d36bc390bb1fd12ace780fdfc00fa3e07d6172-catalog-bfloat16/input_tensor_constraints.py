dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 32, 128], 'in_0'),
    ([4, 128], 'w_0'),
    ([4], 'w_1'),
]
