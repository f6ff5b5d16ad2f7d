class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [1, 1, 3, 192, 192]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = -0.002264841085352134
    std = 1.00178433165446
    min_val = -4.34328031539917
    max_val = 4.562695503234863
    data = None
    kind = 'input'
