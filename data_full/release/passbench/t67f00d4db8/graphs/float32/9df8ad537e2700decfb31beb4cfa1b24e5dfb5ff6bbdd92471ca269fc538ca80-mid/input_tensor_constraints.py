dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 256, 131, 21], 'in_0'),
    ([256, 256, 1, 1], 'w_0'),
    ([256], 'w_1'),
]
