dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 768, 257, 1], 'in_0'),
    ([27, 768, 1, 1], 'w_0'),
]
