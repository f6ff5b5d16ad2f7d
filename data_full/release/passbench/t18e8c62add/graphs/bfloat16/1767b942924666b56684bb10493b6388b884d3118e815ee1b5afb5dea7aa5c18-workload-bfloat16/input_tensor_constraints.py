dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 816, 1, 1], 'in_0'),
    ([34, 816, 1, 1], 'w_0'),
    ([34], 'w_1'),
]
