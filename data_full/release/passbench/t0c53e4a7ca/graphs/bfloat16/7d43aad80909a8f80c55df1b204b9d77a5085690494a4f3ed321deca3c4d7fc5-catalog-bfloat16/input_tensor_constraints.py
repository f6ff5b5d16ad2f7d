dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 64, 320, 320], 'in_0'),
    ([64, 64, 1, 1], 'w_0'),
    ([64], 'w_1'),
]
