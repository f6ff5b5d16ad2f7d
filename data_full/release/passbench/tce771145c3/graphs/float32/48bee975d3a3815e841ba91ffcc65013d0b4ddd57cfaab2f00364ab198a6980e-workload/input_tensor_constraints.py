dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 3, 224, 224], 'in_0'),
    ([384, 3, 16, 16], 'w_0'),
    ([384], 'w_1'),
    ([8, 1, 384], 'in_1'),
    ([1, 197, 384], 'w_2'),
]
