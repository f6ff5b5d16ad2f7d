dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 8, 384], 'in_0'),
    ([384, 384], 'w_0'),
    ([384], 'w_1'),
    ([1, 8, 384], 'in_1'),
]
