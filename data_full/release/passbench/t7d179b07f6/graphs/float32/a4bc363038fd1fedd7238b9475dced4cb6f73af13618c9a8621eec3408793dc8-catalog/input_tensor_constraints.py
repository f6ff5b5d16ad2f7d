dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 192, 8, 6], 'in_0'),
    ([1, 192, 8, 6], 'in_1'),
    ([1, 192, 8, 6], 'in_2'),
]
