dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 256, 64, 128], 'in_0'),
    ([19, 256, 1, 1], 'w_0'),
    ([19], 'w_1'),
]
