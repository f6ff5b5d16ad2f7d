class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [8, 256, 10, 10]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_w_0:
    name = 'w_0'
    original_name = 'in1'
    shape = [15, 256, 1, 1]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = -0.00020005223699900063
    std = 0.010033533909487262
    min_val = -0.03471441939473152
    max_val = 0.03915485739707947
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_w_1:
    name = 'w_1'
    original_name = 'in2'
    shape = [15]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 0.0
    min_val = 0.0
    max_val = 0.0
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_in_1:
    name = 'in_1'
    original_name = 'in3'
    shape = [8, 1500, 1]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_2:
    name = 'in_2'
    original_name = 'in4'
    shape = [8, 375, 1]
    dtype = 'torch.bfloat16'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'
