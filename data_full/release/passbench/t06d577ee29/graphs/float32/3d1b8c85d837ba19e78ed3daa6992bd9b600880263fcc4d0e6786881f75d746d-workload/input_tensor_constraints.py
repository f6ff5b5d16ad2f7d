dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 19, 2560], 'in_0'),
    ([2560], 'w_0'),
    ([2560], 'w_1'),
]
