/* A test-only build of the depthwise weight gradient (families/wgrad/wgrad_depthwise.cu) without the
 * barriers between the steps of its reduction tree (primitives/planted_bugs.h): a lane adds a
 * neighbour's sum before that neighbour has finished adding. Launcher:
 * convnd_planted_tree_wgrad_depthwise. */
#define CONVND_EMU 1
#define CONVND_PLANTED_BUG CONVND_PLANT_WGRAD_DEPTHWISE_NO_TREE_BARRIER
#define CONVND_NS convnd_planted_tree
#define CONVND_LAUNCHER(name) convnd_planted_tree_##name
#include "wgrad_depthwise.cu"
