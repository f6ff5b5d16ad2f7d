dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 640, 49, 49], 'in_0'),
    ([640, 1, 3, 3], 'w_0'),
]
