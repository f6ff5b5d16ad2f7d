dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 224], 'in_0'),
    ([1000, 224], 'w_0'),
    ([1000], 'w_1'),
    ([], 'in_1'),
]
