dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 384, 8, 8], 'in_0'),
    ([1536, 192, 1, 1], 'w_0'),
    ([1536], 'w_1'),
]
