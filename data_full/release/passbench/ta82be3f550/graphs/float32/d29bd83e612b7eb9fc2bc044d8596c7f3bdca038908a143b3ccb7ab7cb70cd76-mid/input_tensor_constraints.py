dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 192], 'in_0'),
    ([1000, 192], 'w_0'),
    ([1000], 'w_1'),
    ([4, 1000], 'in_1'),
]
