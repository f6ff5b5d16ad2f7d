dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 160, 14, 14], 'in_0'),
    ([160, 160, 2, 2], 'w_0'),
    ([160], 'w_1'),
]
