dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 3, 256, 256], 'in_0'),
    ([96, 3, 7, 7], 'w_0'),
    ([96], 'w_1'),
]
