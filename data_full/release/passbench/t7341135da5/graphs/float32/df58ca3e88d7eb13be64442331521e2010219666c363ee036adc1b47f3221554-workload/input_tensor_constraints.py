dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 96, 8, 8], 'w_0'),
    ([8, 96, 56, 56], 'in_0'),
]
