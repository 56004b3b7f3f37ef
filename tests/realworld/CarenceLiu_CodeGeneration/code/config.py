model_dim = 512
max_len = 256
batch_size = 16
layer_num = 4
head_num = 8
ffn_hidden = 2048
drop_prob = 0.1
lr = 1e-4
epoch = 4
eps = 1e-9
voc_size = 30526
weigh_decay = 1e-5

bos_token_id = 30522
eos_token_id = 30523
pad_token_id = 0
unk_token_id = 100
sep_token_id = 30524