import sys

for word in sys.argv[1:]:
    print(word)
