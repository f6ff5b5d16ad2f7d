dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 1536, 28, 28], 'in_0'),
    ([384, 1536, 1, 1], 'w_0'),
    ([384], 'w_1'),
    ([1, 384, 28, 28], 'in_1'),
]
