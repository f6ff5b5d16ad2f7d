dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 1, 448], 'in_0'),
    ([224, 448], 'w_0'),
    ([224], 'w_1'),
    ([1, 400, 224], 'in_1'),
]
